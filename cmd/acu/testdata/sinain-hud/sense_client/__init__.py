"""Sinain sense_client — screen capture preprocessing pipeline."""
