import sys

from partida.cli import main

sys.exit(main())
