// The browser's "#server-only" (see index.ts): Next answers this import with a build error.
import "server-only";
