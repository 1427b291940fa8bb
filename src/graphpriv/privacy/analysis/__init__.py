"""Pure privacy maths (no state, no torch): each function cites its source and is tested."""
