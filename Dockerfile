# One image for every Flywheel service; docker-compose.yml picks the command.
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY schemas schemas
COPY streams streams
COPY services services
COPY devices devices
COPY trainer trainer
RUN pip install --no-cache-dir .
ENV FLYWHEEL_DATA_DIR=/data
VOLUME /data
ENTRYPOINT ["flywheel"]
