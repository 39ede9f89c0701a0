"""`python -m infra.cli`: the `casino` command, as the installed script runs it."""

from infra.cli import main

main()
