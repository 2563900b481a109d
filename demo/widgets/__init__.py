"""The app's widgets, one module each; they render snapshot views and send messages."""
