# One image for the gateway and the workers (the command picks which). Migrations run from the same image.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
COPY apps/gateway/package.json apps/gateway/package.json
COPY apps/worker/package.json apps/worker/package.json
COPY packages packages
RUN npm ci --include=dev --no-audit --no-fund
COPY . .
RUN chmod +x tools/schema-engine-wasm.mjs && npx prisma generate
USER node
EXPOSE 3000
CMD ["node", "--import", "tsx", "apps/gateway/src/main.ts"]
