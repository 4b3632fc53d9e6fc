# One node with its bot pool on SQLite:
#   docker build -t partida .
#   docker run -p 8765:8765 -v partida-data:/data partida
# The database (accounts, games, ladders) is /data/partida.db: without a volume on /data it is
# lost with the container. For several nodes on PostgreSQL, see docker-compose.yml.
FROM python:3.11-slim
RUN apt-get update && apt-get install -y --no-install-recommends gcc && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY . .
RUN pip install --no-cache-dir .
ENV PARTIDA_DB=/data/partida.db
VOLUME ["/data"]
EXPOSE 8765
CMD ["partida", "serve", "--host=0.0.0.0"]
