"""`python -m pipeline_kit` is the `pipeline-kit` command."""

from pipeline_kit.cli import main

raise SystemExit(main())
