"""The app's own words, one table per part of it (the glossary's words, shared with the
transcript, help and exports, are core.scenarios.glossary's); demo.i18n joins them into
the one table `tr` reads, and refuses a word two tables both define."""
