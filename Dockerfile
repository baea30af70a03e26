# One image for the gateway and the workers (the command picks which). Migrations run from the same image.
# The current Node LTS (26; Debian 13 is its default base). `engines` in package.json keeps the oldest Node we test on.
FROM node:26-trixie-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
COPY apps/gateway/package.json apps/gateway/package.json
COPY apps/worker/package.json apps/worker/package.json
COPY apps/console/package.json apps/console/package.json
COPY packages packages
RUN npm ci --include=dev --no-audit --no-fund
COPY . .
RUN chmod +x tools/schema-engine-wasm.mjs && npx prisma generate && npm run build
USER node
EXPOSE 3000
# The bundles (dist/) with the Node options of APP_NODE_FLAGS in scripts/lib.mjs: see docs/development.md › Memory.
CMD ["node", "--liftoff-only", "--max-semi-space-size=4", "--heap-growing-percent=50", "dist/gateway/main.mjs"]
