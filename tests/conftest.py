"""Suite-wide settings."""

import os

from hypothesis import settings

# CI (CI=true) draws the same property-test examples every run, so a landing never depends on
# luck; local runs keep exploring new examples and report any failure with its reproduction blob.
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("dev", print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "dev")
