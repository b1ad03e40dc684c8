"""The library as the window shows it: the documents panel, the watched folders, and the
empty state that invites the first documents."""
