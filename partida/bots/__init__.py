"""Agents (random, search) and the bot runner that connects them to a server like any client."""
