"""What an answer shows: the turns of a conversation (turns.py), a turn's card with its
badge and citation chips, the source cards and the page preview, and the summary dialog."""
