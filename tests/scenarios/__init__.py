"""The scenario files, the player, the Session, the glossary and the sentences."""
