"""``python -m warpmatch``: the same as the ``warpmatch`` command."""
from .cli import main

if __name__ == "__main__":
    main()
