"""The seed's three agent uses as real work under `store.hold`: tool calls to the fenced
downstream service, a task that parks for a human's approval, and a browser walk."""
