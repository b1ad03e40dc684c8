"""Chat engines behind one protocol (engine.py): the local llama.cpp engine (local.py) and the
model it loads (chat_model.py); the cloud engines live in app.cloud."""
