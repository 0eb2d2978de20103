import type { ButtonHTMLAttributes } from "react";

type Variant = "default" | "primary" | "danger";

export function Button({ variant = "default", small, className, ...props }: ButtonHTMLAttributes<HTMLButtonElement> & { variant?: Variant; small?: boolean }) {
  const classes = ["button", variant !== "default" ? `button-${variant}` : "", small ? "button-small" : "", className ?? ""].filter(Boolean).join(" ");
  return <button type="button" {...props} className={classes} />;
}
