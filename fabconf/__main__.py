import sys

from fabconf.cli import main

sys.exit(main())
