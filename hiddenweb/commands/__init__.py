"""Sub-commands of the ``hiddenweb`` console command, one module each (see :mod:`hiddenweb.cli`)."""
