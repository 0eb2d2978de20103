import type { NextConfig } from "next";

const config: NextConfig = {
  // The dashboard is one Node process in front of the services; it never serves their tokens to the browser.
  poweredByHeader: false,
  reactStrictMode: true,
};

export default config;
