"""The pieces of the two fuzzers beside this package, cli_fuzz.py and study_fuzz.py.

Shared by both: `process` (one run of the binary under a timeout, an address-space limit and a
thread watch), `verdict` (the class of one run, and the checks of a `stats` answer), `oracle`
(exact statistics with fractions.Fraction) and `driver` (the command line, cases run in worker
processes and tallied, the report). The CLI fuzzer's cases are in `cli/`, the study fuzzer's
scenarios in `study/`.
"""
