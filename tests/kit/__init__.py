"""Test fakes: a loopback fake GitHub server and recorded webhook deliveries."""
