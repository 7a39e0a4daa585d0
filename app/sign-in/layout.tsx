export const metadata = { title: "Sign in" };
export default function Layout({ children }: { children: React.ReactNode }) {
  return children;
}
