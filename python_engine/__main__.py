"""``python -m python_engine``: the engine package holds the generator only;
the tools that sit on top of both engines are ``parity`` commands
(``parity emit``, ``parity run``; docs/cli.md). This entry point imports
nothing and says so in one line (exit 2)."""
import sys

if __name__ == "__main__":
    print("error: python -m python_engine has no commands: use `parity emit ...` or `parity run ...` (docs/cli.md)",
          file=sys.stderr)
    sys.exit(2)
