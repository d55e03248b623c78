"""The compile half: inventory -> schema -> model -> topology -> checks -> design -> render.

Pure functions from files to device data to text; no I/O to devices."""
