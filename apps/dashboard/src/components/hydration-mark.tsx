"use client";
import { useEffect } from "react";

/**
 * Marks `<html data-hydrated>` once React runs the page in the browser. Pages arrive with their data in the HTML
 * (docs/dashboard.md#data-in-the-first-html), so what a reader sees can come before its buttons work; a script
 * (the browser suite, a monitoring probe) waits for this mark before it clicks.
 */
export function HydrationMark() {
  useEffect(() => {
    document.documentElement.dataset.hydrated = "";
  }, []);
  return null;
}
