"""The event feed on NATS JetStream (docs/feed.md): the setting (target), the stream
as the relay uses it (stream), and the relay, a worker of the server (relay)."""
