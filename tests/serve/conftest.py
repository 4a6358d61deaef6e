import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "flow"))  # the private PostgreSQL server's fixtures

from postgres_server import postgres_server, postgres_url  # noqa: E402,F401
