"""``trisect batch``: a file of finished outputs parsed on every core (a shell over
``trisect.parse_many``, ``trisect.many``).

``files`` reads JSONL and Parquet row by row and writes the output the same way (streamed,
resumable, a valid partial file after Ctrl-C); ``tokenizer`` loads a local tokenizer file;
``command`` is the CLI command. Parquet needs the ``batch`` extra (pyarrow, tqdm for the
progress bar); nothing here is imported by the core.
"""
