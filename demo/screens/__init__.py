"""The app's screens: the scenario picker, the main screen and the help page."""
