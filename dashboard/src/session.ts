// The signed-in state the pages share: the user, the accounts and the selected one.
export interface Account {
  id: number;
  name: string;
  role: "owner" | "admin" | "editor" | "viewer";
}

export interface SessionState {
  user: { id: number; name: string; email: string; current_account_id: number | null; current_project_id: number | null };
  csrf_token: string;
  accounts: Account[];
  current_account: Account | null;
}

export const state: { session: SessionState | null } = { session: null };

export const manages = () => state.session?.current_account?.role === "owner" || state.session?.current_account?.role === "admin";
