"""The app's own widgets: built by screens, talking to the App only through messages."""
