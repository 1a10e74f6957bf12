# The server. Built on Node 24, which runs the TypeScript sources as they are (type
# stripping): no build step. The embedded store lives in /data; set DATABASE_URL and
# REDIS_URL for PostgreSQL + Redis instead.
#
#   docker build -t avatar-service .
#   docker run -p 3000:3000 -v avatar-data:/data avatar-service
FROM node:24-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY openapi ./openapi
COPY generated ./generated
COPY contract ./contract
COPY server/src ./server/src
ENV HOST=0.0.0.0 PORT=3000 DATA_DIR=/data PUBLIC_BASE_URL=http://localhost:3000
VOLUME /data
EXPOSE 3000
USER node
# The young generation's size, as `npm start` sets it (README, "Capacity, on paper").
CMD ["node", "--max-semi-space-size=16", "--max-old-space-size=256", "server/src/main.ts"]
