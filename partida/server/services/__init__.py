"""The services behind the shell. Each is handed the few parts it uses (never the server),
registers its request types with `handlers()` and, where it keeps something per connection,
forgets it in `disconnected(session)`. docs/design.md, "Adding a request type", says how to add one.
"""
