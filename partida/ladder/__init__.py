"""Bot ladders without I/O: ratings, the pairing rule and time-control text.

The server's scheduler (`partida.server.ladders`), the storage that rates a finished game in the
transaction that stores it (`partida.storage.ladders`) and the command line (`partida ladder
rerate`) all call these same functions, so a rating computed live and one rebuilt from stored
results are the same floating-point numbers.
"""
