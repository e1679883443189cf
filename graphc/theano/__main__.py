"""``python -m graphc.theano script.py [args...]``: run a Theano program on graphc."""

import sys

from graphc.theano import main

sys.exit(main())
