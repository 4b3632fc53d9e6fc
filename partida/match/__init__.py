"""Matches between agents played in-process: paired sets of games for engine testing."""
