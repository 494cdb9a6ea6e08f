"""docs/benchmarks.md, written from the result files the benchmarks leave in bench/out/.

    .venv/bin/python -m bench.report           # write docs/benchmarks.md
    .venv/bin/python -m bench.report --check   # exit 1 if it differs from bench/out/

Each section names one result file (bench/out/<name>.json, written by `bench.common.
write_record`), renders its tables from that file alone, and heads them with the command that
produced it, the machine, its CPU flags and the load before and after. A section whose file
is missing says so and gives the command. A note under bench/report/notes/<name>.md (what a
figure means, what was tried and not kept) follows the section's tables.
"""
