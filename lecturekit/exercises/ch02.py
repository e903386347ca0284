"""Checks for the exercises of chapter 2."""
