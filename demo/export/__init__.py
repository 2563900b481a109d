"""`borrowed-keys export`: a scenario as one self-contained web page, made by the app.

`cli` is the command (light: the console script imports it to build its parser), `frames`
plays the scenario in the app and keeps its screens, `page` writes the HTML, `preview` the
GIF.
"""

DEFAULT_SIZE = (160, 48)  # the snapshot tests' size: frames compare with their SVGs
