#!/bin/sh
# expect: valid_refused
# args: --runs 1
# Refuses every database, the archivable first one included.
exit 3
