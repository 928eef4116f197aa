"""``python -m rmqlb``."""

from rmqlb.cli import main

if __name__ == "__main__":
    main()
