"""Builds the C part of the Othello engine; everything else is configured in pyproject.toml."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "partida.games.othello._engine",
            ["partida/games/othello/_engine.c"],
            extra_compile_args=["-O3", "-std=gnu99", "-Wall"],
        )
    ]
)
