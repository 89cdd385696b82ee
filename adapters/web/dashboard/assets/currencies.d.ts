// Types of currencies.js, which the server renders from core's currency table (assets.go).
export const exponents: Readonly<Record<string, number>>;
