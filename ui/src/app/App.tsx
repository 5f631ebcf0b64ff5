// Routes: the login page until a session exists, then the shell with its pages. Heavy pages (the
// Application's graph) are split into their own chunks and loaded when opened.
import { lazy, Suspense } from 'react';
import { Route, Switch, Redirect } from 'wouter';
import { useSessionKeepAlive, useUserInfo } from '../auth/session';
import { LoginPage } from '../auth/LoginPage';
import { Shell } from './Shell';
import { ApplicationsPage } from '../applications/ApplicationsPage';
import { NotFound } from './NotFound';
import { AuditPage } from '../audit/AuditPage';
import {
  ApplicationSetPage,
  ApplicationSetsPage,
  NewApplicationSetPage,
} from '../applicationsets/ApplicationSetsPage';
import { ClustersPage } from '../clusters/ClustersPage';
import { AccountsPage } from '../accounts/AccountsPage';
import { ProjectPage, ProjectsPage } from '../projects/ProjectsPage';
import { RepositoriesPage } from '../repositories/RepositoriesPage';

const ApplicationPage = lazy(() => import('../applications/ApplicationPage'));

export function App() {
  const user = useUserInfo();
  useSessionKeepAlive(user.data?.loggedIn === true);
  if (user.isPending) return <p className="loading">Loading…</p>;
  if (!user.data?.loggedIn) return <LoginPage />;
  return (
    <Shell user={user.data}>
      <Suspense fallback={<p className="loading">Loading…</p>}>
        <Switch>
          <Route path="/">
            <Redirect to="/applications" />
          </Route>
          <Route path="/applications" component={ApplicationsPage} />
          <Route path="/audit" component={AuditPage} />
          <Route path="/projects" component={ProjectsPage} />
          <Route path="/repositories" component={RepositoriesPage} />
          <Route path="/applicationsets" component={ApplicationSetsPage} />
          <Route path="/applicationsets/new" component={NewApplicationSetPage} />
          <Route path="/clusters" component={ClustersPage} />
          <Route path="/accounts" component={AccountsPage} />
          <Route path="/applicationsets/:namespace/:name">
            {(p) => <ApplicationSetPage namespace={p.namespace} name={p.name} />}
          </Route>
          <Route path="/projects/:name">{(p) => <ProjectPage name={p.name} />}</Route>
          <Route path="/applications/:namespace/:name">
            {(p) => <ApplicationPage namespace={p.namespace} name={p.name} />}
          </Route>
          <Route component={NotFound} />
        </Switch>
      </Suspense>
    </Shell>
  );
}
