"""The console script ``emq``: the operator's command, the same Rust program
as ``cargo install --path cli`` (``emq --help`` lists the commands)."""

from __future__ import annotations

import sys

from . import _native


def main() -> None:
    """Run ``emq`` with this process's arguments and exit with its code."""
    sys.exit(_native.cli_main(["emq", *sys.argv[1:]]))


if __name__ == "__main__":
    main()
