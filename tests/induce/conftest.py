import sys
from pathlib import Path

# the kitchen game and its lessons are imported by name
sys.path.insert(0, str(Path(__file__).parent))
