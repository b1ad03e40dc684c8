"""Docent's Qt front end."""
