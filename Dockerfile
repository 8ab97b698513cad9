# The service image: Node 24 (a maintained LTS line) with the sources run through tsx (no build step to drift from
# what the tests ran). It runs as the unprivileged `node` user, which owns the data folder and nothing else.
FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force
COPY bin ./bin
COPY migrations ./migrations
COPY src ./src
# The data folder holds the gateway signing key file (and the embedded database when DATABASE_URL is unset). It is
# created here, owned by the user the server runs as, so that user can write it; a named volume mounted on it starts
# as a copy of it, with the same owner, and keeps the keys when the container is re-created.
ENV SVC_DATA_DIR=/app/data
RUN mkdir -p /app/data && chown node:node /app/data && chmod 0700 /app/data
VOLUME ["/app/data"]
USER node
ENV HOST=0.0.0.0 PORT=8080
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# The same command as `npm start` (package.json), its V8 flag included (docs/operations.md#memory).
CMD ["node", "--max-semi-space-size=64", "--import", "tsx", "src/server.ts"]
