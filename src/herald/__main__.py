"""Allow ``python -m herald``."""

from herald.cli import main

if __name__ == "__main__":
    main()
